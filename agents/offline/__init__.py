"""The offline agents' reading of documentation: deterministic, no model.

A passage is read as statements, each with the API entry or setting it documents
(benchsmith/entries.py). ``facts`` finds what each statement does (a procedure, a condition, a
definition, an error and its cause, a parameter, a comparison...) from its grammar
(benchsmith/language.py): one module of readers per kind of statement, over shared phrase and
clause helpers; ``wording`` turns a fact into the questions a user asks about it; ``asking`` picks
a turn's question and finds the statements that answer it; ``namesakes`` finds the entries and
subjects two passages share.
"""
