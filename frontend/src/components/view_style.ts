// A view's own stylesheet: injected once as a <style> (TensorBoard's CSP allows inline
// styles), next to the shell's styles.css, the first time the view renders.

export function ensureStyle(id: string, css: string): void {
  const selector = `style[data-kinetoscope-view="${id}"]`;
  if (document.head.querySelector(selector)) return;
  const style = document.createElement('style');
  style.dataset.kinetoscopeView = id;
  style.textContent = css;
  document.head.appendChild(style);
}
