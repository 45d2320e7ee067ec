"""All test fakes live here (one module per area)."""
