/**
 * The real Pi TUI in a private tmux server (its own socket, so nothing else is touched): type keys,
 * read the screen with `tmux capture-pane`, wait for text by polling the pane (no fixed sleeps), and
 * kill the tmux server (and Pi with it) at the end.
 */
import { spawnSync } from "node:child_process";
import { FAUX_EXT, FAUX_MODEL, PI_CLI, type Sandbox } from "./pi.ts";

export const HAS_TMUX = spawnSync("tmux", ["-V"], { encoding: "utf8" }).status === 0;

export type PiTui = Readonly<{
	/** The visible screen, as text; with `escapes`, with its colours and attributes as SGR sequences. */
	screen(escapes?: boolean): string;
	/** Types text one key at a time, as a person would (each key is its own input event). */
	type(text: string): void;
	/** Named keys: Enter, Escape, Down, Up, … */
	keys(...names: string[]): void;
	/** Polls the screen until `test` holds; throws with the last screen after `timeoutMs`. */
	waitFor(test: RegExp | ((screen: string) => boolean), what?: string, timeoutMs?: number): Promise<string>;
	/** Kills the tmux server and Pi. Idempotent. */
	kill(): void;
}>;

export function startPiTui(sandbox: Sandbox, extensions: readonly string[], size = { cols: 140, rows: 50 }): PiTui {
	const socket = `pi-mcp-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
	const tmux = (...args: string[]) => {
		const run = spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
		if (run.status !== 0) throw new Error(`tmux ${args[0]} failed: ${run.stderr}`);
		return run.stdout;
	};
	const env = Object.entries({ ...sandbox.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${value}`);
	const pi = [
		process.execPath,
		PI_CLI,
		"--no-session",
		"--model",
		FAUX_MODEL,
		"-e",
		FAUX_EXT,
		...extensions.flatMap((path) => ["-e", path]),
	];
	// Several arguments after the session options: tmux runs them directly, without a shell.
	tmux(
		"new-session",
		"-d",
		"-s",
		"pi",
		"-x",
		String(size.cols),
		"-y",
		String(size.rows),
		"-c",
		sandbox.cwd,
		"env",
		"-i",
		...env,
		...pi,
	);
	const screen = (escapes = false) => tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []), "-t", "pi");
	const killed = { value: false };
	return {
		screen,
		type: (text) => {
			for (const char of text) tmux("send-keys", "-t", "pi", "-l", char);
		},
		keys: (...names) => {
			for (const name of names) tmux("send-keys", "-t", "pi", name);
		},
		waitFor: async (test, what = String(test), timeoutMs = 30_000) => {
			const deadline = Date.now() + timeoutMs;
			const holds = (text: string) => (typeof test === "function" ? test(text) : test.test(text));
			for (;;) {
				const text = screen(false);
				if (holds(text)) return text;
				if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${text}`);
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
		},
		kill: () => {
			if (killed.value) return;
			killed.value = true;
			spawnSync("tmux", ["-L", socket, "kill-server"]);
		},
	};
}
