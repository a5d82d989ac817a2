"""Lambda handlers: build the kit once per execution environment, then adapt each event."""
