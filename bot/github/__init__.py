"""GitHub: the PR source (GraphQL batches, REST fallback), webhook payloads, merged-PR listing."""
