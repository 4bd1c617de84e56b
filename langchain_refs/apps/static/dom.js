// The DOM helpers both pages import (chat.js, check.js). Whatever the server sends goes in as
// text: elements are made with createElement and filled with textContent, never parsed as HTML.

// An element with a class and its text (either may be left out).
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}
