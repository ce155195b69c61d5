"""Generated code for the forge plugin protocol; see plugin.v1."""
