// Public surface of src/hub/admission: the admission port, its certificates and the installer of the configurations.
export * from "./admission_review.ts";
export * from "./body_budget.ts";
export * from "./review_body.ts";
export * from "./served_clusters.ts";
export * from "./webhook_certs.ts";
export * from "./webhook_configurations.ts";
export * from "./webhook_installer.ts";
export * from "./webhook_metrics.ts";
export * from "./webhook_server.ts";
