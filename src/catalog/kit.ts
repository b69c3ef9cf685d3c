// Client-kit versions (spec: Versioning). Kits older than MIN_KIT_VERSION must refresh.
export const KIT_VERSION = "2026.09.07";
export const MIN_KIT_VERSION = "2026.09.03";
/** Request header in which a client declares its kit version. */
export const KIT_VERSION_HEADER = "x-kit-version";
export const KIT_REFRESH_PATH = "/v1/skill.md";
export const KIT_CHECK_PATH = "/v1/services";

const KIT_FORMAT = /^\d{4}\.\d{2}\.\d{2}$/;

export type KitCheck = { ok: true } | { ok: false; reason: "kit_version_invalid" | "kit_outdated"; message: string };

/** Checks a declared kit version; versions are dates (YYYY.MM.DD), so string order is version order. */
export function checkKitVersion(declared: string): KitCheck {
  if (!KIT_FORMAT.test(declared)) {
    return { ok: false, reason: "kit_version_invalid", message: `${KIT_VERSION_HEADER} must look like YYYY.MM.DD` };
  }
  if (declared < MIN_KIT_VERSION) {
    return {
      ok: false,
      reason: "kit_outdated",
      message:
        `kit ${declared} is older than min_kit_version ${MIN_KIT_VERSION}; ` +
        `refresh from GET ${KIT_REFRESH_PATH} (current kit_version ${KIT_VERSION}, live check GET ${KIT_CHECK_PATH})`,
    };
  }
  return { ok: true };
}
