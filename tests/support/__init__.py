"""Test support: schema validation of emitted messages, and server processes for end-to-end tests."""
