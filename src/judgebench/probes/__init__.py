"""Probes beyond language (PROTOCOL §7): label-preserving conditions made from the items as data
(length, format, template), declared in configs/probes/ and judged like any condition."""
