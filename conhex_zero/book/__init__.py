"""The opening book: the opening analysis grown from the first move into a tree of searched
positions (one node per position up to symmetry and move order), backed up by minimax, kept in a
checksummed file, read as a table, as pages, and at the board (``book grow|show|html``, ``--book``)."""
