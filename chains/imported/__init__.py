"""A domain of one's own, named by its import path (``package.module:Name``): the dataset records
of any ``chains.protocol.StateDomain`` and the sampling of its splits."""
