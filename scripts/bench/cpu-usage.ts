import fs from "node:fs";
import os from "node:os";

// CPU time per process role during a bench run, read from /proc (Linux; elsewhere nothing is printed):
// what each request costs the server, apart from what the load generator, the chain and the database cost.
// Roles are given by pid (our children) or by command name (anvil, mariadbd/mysqld, found anywhere).

const TICK_MS = 1000 / 100; // USER_HZ: 100 on every Linux this runs on

function cpuMs(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // utime + stime
  } catch {
    return undefined;
  }
}

function pidsNamed(names: string[]): number[] {
  if (os.platform() !== "linux") return [];
  const out: number[] = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (names.includes(fs.readFileSync(`/proc/${d}/comm`, "utf8").trim())) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

export type Roles = Record<string, number[]>;

/** The roles to watch: the given pids plus the chain and the database found by name. */
export function watchedRoles(pids: Record<string, number | undefined>): Roles {
  const roles: Roles = {};
  for (const [role, pid] of Object.entries(pids)) if (pid) roles[role] = [pid];
  roles.anvil = pidsNamed(["anvil"]);
  roles.db = pidsNamed(["mariadbd", "mysqld"]);
  return roles;
}

/** Starts a measurement; the returned function gives CPU ms per role since then. */
export function cpuMeter(roles: Roles): () => Record<string, number> {
  const read = () => Object.fromEntries(Object.entries(roles).map(([role, pids]) => [role, pids.reduce((s, p) => s + (cpuMs(p) ?? 0), 0)]));
  const before = read();
  return () => {
    const after = read();
    return Object.fromEntries(Object.keys(roles).map((r) => [r, after[r]! - before[r]!]));
  };
}
