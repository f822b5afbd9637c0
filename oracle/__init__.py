"""Kernel-verdict oracle (section 50 of the seed paper): not built yet."""
