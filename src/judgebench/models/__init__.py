"""The provider layer: one request/response interface, adapters over official SDKs, the client."""
