#!/usr/bin/env node
// A small MCP server for the demo and `npm start`: a few text tools, served over stdio by the
// official SDK v2 (both protocol eras). Run by pi-mcp, not by hand.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import * as z from "zod/v4";

function factory() {
	const server = new McpServer(
		{ name: "pi-mcp-example", version: "1.0.0" },
		{ capabilities: { tools: {} }, instructions: "Small text utilities for trying pi-mcp." },
	);
	server.registerTool(
		"word_count",
		{ description: "Count the words, lines and characters of a text", inputSchema: z.object({ text: z.string() }) },
		async ({ text }) => {
			const words = text.split(/\s+/).filter(Boolean).length;
			const lines = text.split("\n").length;
			return { content: [{ type: "text", text: `${words} words, ${lines} lines, ${[...text].length} characters` }] };
		},
	);
	server.registerTool(
		"slugify",
		{ description: "Turn a title into a URL slug", inputSchema: z.object({ title: z.string() }) },
		async ({ title }) => ({
			content: [
				{
					type: "text",
					text: title
						.normalize("NFKD")
						.replace(/[\u0300-\u036f]/g, "")
						.toLowerCase()
						.replace(/[^a-z0-9]+/g, "-")
						.replace(/^-|-$/g, ""),
				},
			],
		}),
	);
	server.registerTool(
		"roll_dice",
		{
			description: "Roll dice, e.g. 3 dice with 6 sides",
			inputSchema: z.object({ count: z.number().int().min(1).max(20), sides: z.number().int().min(2).max(100) }),
		},
		async ({ count, sides }) => {
			const rolls = Array.from({ length: count }, () => 1 + Math.floor(Math.random() * sides));
			return { content: [{ type: "text", text: `${rolls.join(", ")} (total ${rolls.reduce((a, b) => a + b, 0)})` }] };
		},
	);
	return server;
}

serveStdio(factory);
