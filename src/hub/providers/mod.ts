// Public surface of src/hub/providers: the registry, what a provider offers it, and the providers that drive it.
export * from "./registry.ts";
export * from "./cluster_offer.ts";
export * from "./on_removed.ts";
export * from "./sources/folder_provider.ts";
export * from "./sources/secret_provider.ts";
export * from "./swappable_access.ts";
export * from "./registered_clusters.ts";
export * from "./name_prefixes.ts";
export * from "./sources/cluster_api_provider.ts";
export * from "./sources/cluster_profile_access.ts";
export * from "./sources/cluster_profile_provider.ts";
