"""Measures: pure functions from judgments, runs and texts to figures (IR measures,
significance, intervals, agreement, diversity, validity, shortcuts, question form)."""
