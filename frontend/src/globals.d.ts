// esbuild loads *.css as text (loader "text"); index.ts injects it in a <style>.
declare module '*.css' {
  const text: string;
  export default text;
}
