"""What a person watching a command sees: progress bars that become whole lines in a log
(``progress``), whether a stream is a terminal (``terminal``), counted words (``words``).
"""
