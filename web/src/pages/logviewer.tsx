/** The logviewer page (issue 21): filled in by its own change. */
export default function Page({ path }: { path: string; params: URLSearchParams }) {
  return <h1>logviewer ({path})</h1>;
}
