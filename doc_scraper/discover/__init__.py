"""``add URL``: probe a docs site, propose a config entry, and splice it into config.yaml."""
