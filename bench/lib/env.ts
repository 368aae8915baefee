/** Versions and machine facts for the bench report. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { join } from "node:path";
import { ROOT } from "./pi.ts";

function versionOf(pkg: string): string {
	try {
		return (JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;
	} catch {
		return "not installed";
	}
}

export type Environment = Readonly<{ date: string; versions: Readonly<Record<string, string>>; machine: string; source: string }>;

/** The measured source: git commit, and whether src/ or index.ts had uncommitted changes. */
function source(): string {
	try {
		const git = (...args: string[]) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();
		const commit = git("rev-parse", "--short", "HEAD");
		const dirty = git("status", "--porcelain", "--", "src", "index.ts") !== "";
		return `${commit}${dirty ? " with uncommitted changes in src/" : ""}`;
	} catch {
		return "unknown (not a git checkout)";
	}
}

export function environment(): Environment {
	const list = cpus();
	return {
		date: new Date().toISOString(),
		versions: {
			Node: process.version,
			Pi: versionOf("@earendil-works/pi-coding-agent"),
			"@modelcontextprotocol/client": versionOf("@modelcontextprotocol/client"),
			"@modelcontextprotocol/server (fixture)": versionOf("@modelcontextprotocol/server"),
			"pi-mcp-adapter": versionOf("pi-mcp-adapter"),
			"gpt-tokenizer": versionOf("gpt-tokenizer"),
		},
		source: source(),
		machine: `${list[0]?.model.trim() ?? "unknown CPU"}, ${list.length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB memory, ${process.platform} ${release()} ${process.arch}`,
	};
}
