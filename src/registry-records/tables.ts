import { classifyLabel, OFFICER_APPOINTED_LABEL, OFFICER_NAME_LABEL, OFFICER_RESIGNED_LABEL, OFFICER_ROLE_LABEL, normalizeLabel } from "./labels.js";
import { linesOf, textOf, type El } from "./dom-text.js";
import { emptyFindings, plainAddress, type Findings, type Provenance } from "./record-types.js";

// Registry values printed as label/value rows (tables with a label cell and a value cell, definition
// lists) and officers printed as tables with a header row (Name, Role, Appointed...) or as one
// definition list per officer (a Role entry, the name in a Name entry or the heading above the list).

function labelled(f: Findings, label: string, valueEl: El, provenance: Provenance): void {
  const target = classifyLabel(label);
  if (!target) return;
  if ("address" in target) {
    const lines = linesOf(valueEl);
    if (lines.length) f.addresses.push(plainAddress(target.address, lines.join(", "), provenance));
    return;
  }
  const value = textOf(valueEl);
  if (value) f.scalars.push({ field: target.field, value, provenance });
}

interface Columns {
  name: number;
  role: number;
  appointed: number;
  resigned: number;
}

function officerColumns(header: string[]): Columns | undefined {
  const find = (re: RegExp) => header.findIndex((h) => re.test(normalizeLabel(h)));
  const cols = { name: find(OFFICER_NAME_LABEL), role: find(OFFICER_ROLE_LABEL), appointed: find(OFFICER_APPOINTED_LABEL), resigned: find(OFFICER_RESIGNED_LABEL) };
  return cols.name >= 0 && (cols.role >= 0 || cols.appointed >= 0) ? cols : undefined;
}

const cellsOf = (row: El): El[] => [...row.children].filter((c: El) => /^(TD|TH)$/i.test(c.tagName));

function fromTable(f: Findings, table: El, ti: number): void {
  const rows: El[] = [...table.querySelectorAll("tr")].filter((r: El) => r.closest("table") === table);
  if (!rows.length) return;
  const headRow = table.querySelector("thead tr") ?? (cellsOf(rows[0]).length >= 2 && cellsOf(rows[0]).every((c: El) => /^TH$/i.test(c.tagName)) ? rows[0] : undefined);
  const cols = headRow ? officerColumns(cellsOf(headRow).map(textOf)) : undefined;
  if (cols) {
    rows
      .filter((r) => r !== headRow)
      .forEach((r, ri) => {
        const cells = cellsOf(r).map(textOf);
        const name = cells[cols.name];
        if (!name) return;
        const at = (i: number) => (i >= 0 ? cells[i] || null : null);
        f.officers.push({ name, role: at(cols.role), appointed_on: at(cols.appointed), resigned_on: at(cols.resigned), provenance: { method: "table", where: `table[${ti}] row ${ri + 1}` } });
      });
    return;
  }
  for (const r of rows) {
    const cells = cellsOf(r);
    if (cells.length !== 2) continue;
    const label = textOf(cells[0]);
    labelled(f, label, cells[1], { method: "table", where: `table[${ti}] row "${label}"` });
  }
}

function headingBefore(el: El): string | undefined {
  for (let node = el, depth = 0; node && depth < 4; node = node.parentElement, depth++) {
    for (let p = node.previousElementSibling; p; p = p.previousElementSibling) {
      if (/^H[1-6]$/i.test(p.tagName)) return textOf(p);
      const inner = [...p.querySelectorAll("h1, h2, h3, h4, h5, h6")].at(-1);
      if (inner) return textOf(inner);
    }
  }
  return undefined;
}

function fromDefinitionList(f: Findings, dl: El, di: number): void {
  const pairs: { label: string; value: El }[] = [];
  let label: string | undefined;
  for (const child of [...dl.querySelectorAll("dt, dd")].filter((c: El) => c.closest("dl") === dl)) {
    if (/^DT$/i.test(child.tagName)) label = textOf(child);
    else if (label !== undefined) pairs.push({ label, value: child });
  }
  const norm = pairs.map((p) => normalizeLabel(p.label));
  const roleAt = norm.findIndex((l) => OFFICER_ROLE_LABEL.test(l));
  if (roleAt >= 0) {
    // One officer per list: the role entry marks it (a company's own lists have no "Role").
    const value = (re: RegExp) => {
      const i = norm.findIndex((l) => re.test(l));
      return i >= 0 ? textOf(pairs[i]!.value) || null : null;
    };
    const name = value(OFFICER_NAME_LABEL) ?? headingBefore(dl);
    if (name) f.officers.push({ name, role: textOf(pairs[roleAt]!.value) || null, appointed_on: value(OFFICER_APPOINTED_LABEL), resigned_on: value(OFFICER_RESIGNED_LABEL), provenance: { method: "definition-list", where: `dl[${di}]${value(OFFICER_NAME_LABEL) ? "" : " under its heading"}` } });
    return;
  }
  for (const p of pairs) labelled(f, p.label, p.value, { method: "definition-list", where: `dl[${di}] "${p.label}"` });
}

export function fromTables(document: El): Findings {
  const f = emptyFindings();
  [...document.querySelectorAll("table")].forEach((t: El, i: number) => fromTable(f, t, i));
  return f;
}

export function fromDefinitionLists(document: El): Findings {
  const f = emptyFindings();
  [...document.querySelectorAll("dl")].forEach((d: El, i: number) => fromDefinitionList(f, d, i));
  return f;
}
