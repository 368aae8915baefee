export * from "./src/index.ts";
export { default } from "./src/index.ts";
