"""The settings of each workflow: its graph's context (a dataclass LangGraph Studio draws as a form),
one module per workflow. They live apart from the graphs so that the CLI's ``--help`` derives its
options from them (benchsmith/cli/settings.py) without loading the graphs' models, Chroma or numpy."""
