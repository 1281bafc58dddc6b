// The API specification's table of error titles (api/implementation-guidelines.md, "Error Handling"):
// the ontology has api:hasTitle but no list of titles, so they are read from the page.
export interface ErrorTitle {
  httpStatus: number;
  title: string;
  message: string;
}

const TABLE_HEADER = /^\|\s*HTTP status code\s*\|\s*Title\s*\|\s*Message in ErrorDetails\s*\|$/;

export function readErrorTitles(markdown: string): ErrorTitle[] {
  const lines = markdown.split(/\r?\n/);
  const header = lines.findIndex((line) => TABLE_HEADER.test(line.trim()));
  if (header === -1) throw new Error("api/implementation-guidelines.md: the table of error titles was not found");
  const titles: ErrorTitle[] = [];
  for (const line of lines.slice(header + 2)) {
    const cells = /^\|(.*)\|$/
      .exec(line.trim())?.[1]
      ?.split("|")
      .map((cell) => cell.trim().replace(/^`|`$/g, ""));
    if (cells === undefined) break;
    const [status, title, message] = cells;
    if (cells.length !== 3 || !/^\d{3}$/.test(status ?? "") || !title || !message)
      throw new Error(`api/implementation-guidelines.md: unexpected row in the table of error titles: ${line}`);
    titles.push({ httpStatus: Number(status), title, message });
  }
  if (titles.length === 0) throw new Error("api/implementation-guidelines.md: the table of error titles is empty");
  return titles;
}
