"""What operators use: liveness and readiness probes, Prometheus metrics, structured logs."""
