"""The Lean bridge: find Lean, build the core library, render statements, check them with positive confirmation, store certificates."""
