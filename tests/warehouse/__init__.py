"""The warehouse: the lake, publishing, clients, the dictionary, concurrent runs."""
