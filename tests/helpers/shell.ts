/**
 * `pi-mcp` run in the test's own process: `main()` from `src/cli/main.ts` with a `CliIo` that captures
 * what it writes, as `bin/pi-mcp.mjs` runs it but without a Node process and jiti's TypeScript load
 * per command. Like the binary, each run carries a mark of its own and is swept after it (`sweep`), so
 * no server process outlives a command. Only the servers are processes here (none with `transports`,
 * the SDK's in-memory pairs of `memory.ts`); what proves the binary itself spawns `bin/pi-mcp.mjs`.
 */
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { main, sweep } from "../../src/cli/main.ts";
import type { Transports } from "../../src/contracts.ts";
import { shareLoaderCaches } from "./caches.ts";

/** Where a command runs: a sandbox of `makeSandbox` or a directory set of `withDirs` alike. */
export type ShellPlace = Readonly<{ env: Readonly<Record<string, string>>; cwd: string; root?: string }>;

export type ShellResult = Readonly<{ code: number; stdout: string; stderr: string }>;

export type ShellOptions = Readonly<{
	/** Added to the place's environment (after `TMPDIR`). */
	env?: Readonly<Record<string, string>>;
	/** Defaults to the place's. */
	cwd?: string;
	/** Text (a pipe that ends after it) or a stream; defaults to an empty pipe that has ended (`< /dev/null`). */
	stdin?: string | NodeJS.ReadableStream;
	/** The servers' transports; defaults to the real ones (processes, sockets). */
	transports?: Transports;
	/** Aborting it is the binary's first Ctrl+C. */
	signal?: AbortSignal;
}>;

export type ShellStarted = Readonly<{
	done: Promise<ShellResult>;
	stdout: () => string;
	/** Resolves once stdout (so far or later) holds `pattern`; rejects if the command ends first. */
	printed: (pattern: RegExp) => Promise<string>;
	/** Writes to the command's stdin (a pipe left open). */
	write: (text: string) => void;
}>;

/** Starts `pi-mcp <args>` in process; stdin is a pipe left open unless `options.stdin` is given. */
export function startShell(place: ShellPlace, args: readonly string[], options: ShellOptions = {}): ShellStarted {
	const out: string[] = [];
	const err: string[] = [];
	const wrote = new EventEmitter();
	const pipe = new PassThrough();
	// Text arrives as a pipe's bytes would (Buffers), then the pipe ends.
	const text = typeof options.stdin === "string" ? [Buffer.from(options.stdin)].filter((chunk) => chunk.length > 0) : [];
	const stdin = options.stdin === undefined ? pipe : typeof options.stdin === "string" ? Readable.from(text) : options.stdin;
	const mark = randomUUID();
	const io = {
		out: (text: string) => {
			out.push(text);
			wrote.emit("out");
		},
		err: (text: string) => {
			err.push(text);
		},
		stdin,
		// Overflow files the output names are kept for the user; here they go away with the sandbox.
		env: { ...place.env, ...(place.root ? { TMPDIR: place.root } : {}), ...options.env },
		cwd: options.cwd ?? place.cwd,
		transports: options.transports,
	};
	const ended = main(args, io, options.signal, mark).finally(() => {
		// As the binary does on its way out; over in-memory transports there is no process to find.
		if (!options.transports) sweep(mark);
		pipe.end();
		wrote.emit("end");
	});
	const stdout = () => out.join("");
	const done = ended.then((code) => ({ code, stdout: stdout(), stderr: err.join("") }));
	const printed = (pattern: RegExp) =>
		new Promise<string>((resolve, reject) => {
			const check = () => {
				const found = pattern.exec(stdout())?.[0];
				if (found === undefined) return false;
				wrote.off("out", check);
				wrote.off("end", last);
				resolve(found);
				return true;
			};
			const last = () => {
				if (!check()) reject(new Error(`${pattern} never appeared on stdout: ${stdout()}`));
			};
			if (check()) return;
			wrote.on("out", check);
			wrote.once("end", last);
		});
	return { done, stdout, printed, write: (text) => pipe.write(text) };
}

/** Runs `pi-mcp <args>` in process; stdin is empty (ended) unless `options.stdin` says otherwise. */
export function shell(place: ShellPlace, args: readonly string[], options: ShellOptions = {}): Promise<ShellResult> {
	return startShell(place, args, { stdin: "", ...options }).done;
}

/** The last `count` lines of a text (what stays on a short terminal's screen). */
export const lastLines = (text: string, count: number): string => text.trimEnd().split("\n").slice(-count).join("\n");

/** A sandbox for in-process runs: an agent directory, a project directory and a home of its own. */
export type ShellBox = Readonly<{
	root: string;
	agentDir: string;
	cwd: string;
	home: string;
	userFile: string;
	projectFile: string;
	env: Readonly<Record<string, string>>;
	cleanup: () => Promise<void>;
}>;

export async function shellBox(): Promise<ShellBox> {
	const root = await mkdtemp(join(tmpdir(), "pi-mcp-shell-"));
	const [agentDir, cwd, home] = ["agent", "proj", "home"].map((dir) => join(root, dir)) as [string, string, string];
	await Promise.all([agentDir, join(cwd, ".pi"), home].map((dir) => mkdir(dir, { recursive: true })));
	await shareLoaderCaches(root);
	return {
		root,
		agentDir,
		cwd,
		home,
		userFile: join(agentDir, "mcp.json"),
		projectFile: join(cwd, ".pi", "mcp.json"),
		env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PI_CODING_AGENT_DIR: agentDir },
		cleanup: () => rm(root, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }),
	};
}

const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

/**
 * An in-memory server shaped like the stdio fixture (`tests/fixtures/server-main.mjs`) where the shell's
 * wording needs it: `echo`, `add`, `fail`, `big`, `images`, an app-only tool and one with escapes in its
 * description; the prompt `greet`; the resources `readme` and `logo.png`; `instructions` as given.
 */
export function notesServer(instructions = "Fixture server for pi-mcp tests."): () => McpServer {
	return () => {
		const server = new McpServer(
			{ name: "pi-mcp-fixture", version: "1.0.0" },
			{ capabilities: { tools: {}, resources: {}, prompts: {} }, instructions },
		);
		server.registerTool(
			"echo",
			{ description: "Echo the text back", inputSchema: z.object({ text: z.string() }) },
			async ({ text: said }) => text(`[memory] ${said}`),
		);
		server.registerTool(
			"add",
			{ description: "Add two numbers", inputSchema: z.object({ a: z.number(), b: z.number() }) },
			async ({ a, b }) => text(String(a + b)),
		);
		server.registerTool(
			"fail",
			{ description: "Return a tool-level error", inputSchema: z.object({ message: z.string().optional() }) },
			async ({ message }) => ({ isError: true, content: [{ type: "text", text: message ?? "it failed" }] }),
		);
		server.registerTool(
			"big",
			{ description: "Return exactly `bytes` ASCII bytes of text", inputSchema: z.object({ bytes: z.number().int() }) },
			async ({ bytes }) => text("abcdefghijklmnopqrstuvwxyz0123456789\n".repeat(Math.ceil(bytes / 37)).slice(0, bytes)),
		);
		server.registerTool(
			"images",
			{ description: "Return count images", inputSchema: z.object({ count: z.number() }) },
			async ({ count }) => ({
				content: [
					{ type: "text", text: `${count} images` },
					...Array.from({ length: count }, () => ({ type: "image" as const, data: PNG_1X1, mimeType: "image/png" })),
				],
			}),
		);
		server.registerTool(
			"app-only",
			{ description: "A tool only the MCP App may call", _meta: { ui: { visibility: ["app"] } } },
			async () => text("app-only called"),
		);
		server.registerTool(
			"escapes",
			{ description: "Terminal \u001b]0;pwned\u0007escapes\u001b[2J in a description", inputSchema: z.object({}) },
			async () => text("safe"),
		);
		server.registerPrompt(
			"greet",
			{ description: "Greet someone", argsSchema: z.object({ name: z.string() }) },
			async ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please greet ${name}.` } }] }),
		);
		server.registerResource("readme", "fixture://readme", { description: "The readme", mimeType: "text/plain" }, async (uri) => ({
			contents: [{ uri: uri.href, mimeType: "text/plain", text: "readme" }],
		}));
		server.registerResource("logo", "fixture://logo.png", { description: "A tiny logo", mimeType: "image/png" }, async (uri) => ({
			contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG_1X1 }],
		}));
		return server;
	};
}
