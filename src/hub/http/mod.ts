// Public surface of src/hub/http: the hub's HTTP side (the health port, the protected port, /status and /metrics).
export * from "./http_server.ts";
export * from "../health/probe_view.ts";
export * from "./protected_server.ts";
export * from "./request_auth.ts";
export * from "../health/status_routes.ts";
export * from "../health/status_view.ts";
export * from "./tls_material.ts";
