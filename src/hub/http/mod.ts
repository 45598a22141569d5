// Public surface of src/hub/http: the hub's HTTP side (the health port, the protected port, /status and /metrics).
export * from "./http_server.ts";
export * from "./probe_view.ts";
export * from "./protected_server.ts";
export * from "./request_auth.ts";
export * from "./status_routes.ts";
export * from "./status_view.ts";
export * from "./tls_material.ts";
