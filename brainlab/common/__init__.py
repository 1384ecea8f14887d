"""The ground floor every layer may use: errors, default paths, plain text, the terminal, tables.

``errors`` (the exceptions behind every ``Error:`` line), ``paths`` (default store and report
locations), ``plaintext`` (data strings printed as plain text), ``terminal`` (width and colour)
and ``tables`` (terminal, JSON and CSV tables). They import nothing of brainlab but spec/.
"""
