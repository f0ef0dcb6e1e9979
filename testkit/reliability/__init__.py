"""Harnesses that run `prdigest serve` against the fakes and break things on purpose."""
