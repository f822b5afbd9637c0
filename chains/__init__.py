"""The domains (``rewrite/``: expression trees and their rules; ``programs/``: register machines) and what
every domain shares: the protocol a domain implements, manifests, held-out protocols, dataset writing.
Knows nothing of Lean or torch."""
