"""The offline agents' reading of documentation: deterministic, no model.

``passage`` reads a chunk as statements, each with the API entry or setting it documents;
``facts`` finds what each statement does (a procedure, a condition, a definition, an error and
its cause, a parameter, a comparison...) from its grammar (benchsmith/language.py);
``wording`` turns a fact into the questions a user asks about it; ``asking`` picks a turn's
question and finds the statements that answer it.
"""
