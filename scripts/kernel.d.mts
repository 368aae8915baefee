export function assemble(): Promise<string>;
export function embedded(text: string): { before: string; inside: string; after: string };
