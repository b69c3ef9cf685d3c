// Jurisdictions served (spec: What the service does, item 10). CN is excluded: offshore and cross-border only.
export const SERVED_JURISDICTIONS = ["US", "EU", "UK", "CA", "AU", "SG", "JP", "KR", "AE", "CH", "GLOBAL-OFFSHORE"] as const;
export const EXCLUDED_JURISDICTIONS = ["CN"] as const;
