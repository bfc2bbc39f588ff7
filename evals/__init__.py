"""Measures and reports. Imports none of graphs/, agents/, tools/ or stores/."""
