"""Label-preserving translation of items into other language conditions, and its audit (PROTOCOL §2)."""
