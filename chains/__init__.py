"""The domains (``rewrite/``: expression trees and their rules; ``programs/``: register machines;
``groups/``: group word problems) and what every domain shares: the protocol a domain implements, the
registry of domains, manifests, held-out protocols, dataset writing.
Imports neither Lean's bridge nor torch: a domain's Lean module is text that ``leanbridge`` compiles."""
