import type { AddressKind, ScalarField } from "./record-types.js";

// The labels registries print next to their values ("Company number", "Registered office address",
// "Date of incorporation"...), in tables, definition lists, JSON-LD additionalProperty names and text.

export type LabelTarget = { field: ScalarField } | { address: AddressKind };

const RULES: [RegExp, LabelTarget][] = [
  [/^(registered (office )?address|registered office|address of registered office|registered agent address)$/, { address: "registered" }],
  [/^(principal (office|place of business|executive office)( address)?|principal address|head (office|quarters)( address)?|headquarters( address)?)$/, { address: "principal" }],
  [/^(business|office|trading|street|physical) address$/, { address: "business" }],
  [/^(mailing|postal|correspondence|service) address$/, { address: "mailing" }],
  [/^(address|addresses)$/, { address: "other" }],
  [
    /^((company|registration|registry|registered|entity|corporate|business|file|charter|incorporation|organisation|organization|commercial register) (number|no|#|id|identifier|code)|company registration (number|no)|crn|reg no|registration|registry code|handelsregisternummer|kvk number|siren|uen|abn|acn|cin)$/,
    { field: "registration_number" },
  ],
  [/^((company|entity|registration|current|legal|corporate|business) )?status$/, { field: "status" }],
  [
    /^(incorporated( on)?|incorporation( date)?|date of (incorporation|formation|registration|organisation|organization)|formation date|formed( on)?|registration date|registered on|date registered|date incorporated|founded( on)?|founding date|initial filing date|effective date of incorporation)$/,
    { field: "incorporation_date" },
  ],
  [/^(dissolved( on)?|dissolution( date)?|date of dissolution|date dissolved|ceased( on)?)$/, { field: "dissolution_date" }],
  [/^((company|entity|legal|registered|business|corporate|organisation|organization) name|name)$/, { field: "company_name" }],
  [/^((company|entity|business|corporation|organisation|organization) type|legal form|type|entity kind|company category|legal entity type|business structure|company kind)$/, { field: "company_type" }],
  [/^(jurisdiction|home jurisdiction|state of (incorporation|formation|organisation|organization)|country of (incorporation|registration|formation)|registered in|place of registration|incorporated in)$/, { field: "jurisdiction" }],
];

/** A label as printed, reduced for matching: lower case, no trailing colon/asterisk, spaces collapsed. */
export function normalizeLabel(label: string): string {
  return label
    .toLowerCase()
    .replace(/[.:：*]+/g, " ")
    .replace(/\(.*?\)/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

export function classifyLabel(label: string): LabelTarget | undefined {
  const l = normalizeLabel(label);
  if (!l || l.length > 60) return undefined;
  return RULES.find(([re]) => re.test(l))?.[1];
}

// Officer tables and blocks.
export const OFFICER_NAME_LABEL = /^((officer|director|person|full|member|partner) )?name$|^(officer|director|person|name of officer)$/;
export const OFFICER_ROLE_LABEL = /^(role|position|title|capacity|designation|officer role|appointment|appointment type|type of appointment)\b/;
export const OFFICER_APPOINTED_LABEL = /^(appointed( on| date)?|date (of )?appointed|date of appointment|appointment date|start date|since|from)$/;
export const OFFICER_RESIGNED_LABEL = /^(resigned( on| date)?|date of resignation|resignation date|ceased( on)?|end date|until|to)$/;

/** Roles registries list for officers; used to recognise officers written as text. */
export const OFFICER_ROLES =
  "director|managing director|executive director|non-executive director|company secretary|secretary|chief executive officer|chief financial officer|chief operating officer|ceo|cfo|coo|president|vice president|treasurer|chair(?:man|woman|person)?|general partner|partner|managing member|member|manager|registered agent|agent|officer|founder|co-founder|authorised signatory|authorized signatory|liquidator|administrator";
