"""Adapters that plug toolwire into other software (serving engines, client SDKs); each imports its host lazily."""
