"""Measures and reports: reports/ and quality_gate/ above measures/. Imports none of graphs/,
agents/, tools/ or stores/."""
