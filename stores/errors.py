"""The one error type for bad user input, so every front end can report it the same way."""


class InputError(ValueError):
    """Bad input from the user: a missing path, an empty corpus, a malformed line.

    The message names the file (and line or id where there is one) and says what to fix.
    """
