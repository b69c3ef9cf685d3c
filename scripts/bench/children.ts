import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

// Starts a bench server as a child process (same Node flags as this process, so tsx loads it) and
// waits for the first IPC message (its URLs). `stop` asks it to close and waits for the exit.

export interface Child<T> {
  info: T;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export async function startChild<T>(file: string, env: Record<string, string>, extraArgv: string[] = []): Promise<Child<T>> {
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    env: { ...process.env, ...env },
    execArgv: [...process.execArgv, ...extraArgv],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const info = await new Promise<T>((resolve, reject) => {
    proc.once("message", (m) => resolve(m as T));
    proc.once("exit", (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
  });
  return {
    info,
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        proc.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        proc.send("stop");
      }),
  };
}
