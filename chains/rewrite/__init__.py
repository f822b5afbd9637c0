"""The rewrite domain: expression trees, the tier-1 and tier-2 rules, the state graph, chain,
partner and probe sampling, the held-out protocols' draws and the chain datasets on disk."""
