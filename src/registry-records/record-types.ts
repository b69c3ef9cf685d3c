// The shape of a business-registry record extracted from a page, every value with its provenance.

export const METHODS = ["json-ld", "table", "definition-list", "text", "heading"] as const;
export type Method = (typeof METHODS)[number];

/** Which method found a value, and where on the page (a script block and property, a table row, a line). */
export type Provenance = {
  method: Method;
  where: string;
}

export const SCALAR_FIELDS = ["company_name", "registration_number", "status", "incorporation_date", "dissolution_date", "company_type", "jurisdiction"] as const;
export type ScalarField = (typeof SCALAR_FIELDS)[number];

export const ADDRESS_KINDS = ["registered", "principal", "business", "mailing", "other"] as const;
export type AddressKind = (typeof ADDRESS_KINDS)[number];

export type ScalarCandidate = {
  field: ScalarField;
  value: string;
  provenance: Provenance;
}

export type AddressCandidate = {
  kind: AddressKind;
  text: string;
  street: string | null;
  locality: string | null;
  region: string | null;
  postal_code: string | null;
  country: string | null;
  provenance: Provenance;
}

export type OfficerCandidate = {
  name: string;
  role: string | null;
  appointed_on: string | null;
  resigned_on: string | null;
  provenance: Provenance;
}

/** Everything one method found. */
export type Findings = {
  scalars: ScalarCandidate[];
  addresses: AddressCandidate[];
  officers: OfficerCandidate[];
}

export const emptyFindings = (): Findings => ({ scalars: [], addresses: [], officers: [] });

export function plainAddress(kind: AddressKind, text: string, provenance: Provenance): AddressCandidate {
  return { kind, text, street: null, locality: null, region: null, postal_code: null, country: null, provenance };
}
