// The one-time login: the code is in the URL fragment (never sent in a request line); it is
// exchanged at /auth/exchange for a dashboard session: an HttpOnly cookie, and a proof that
// this page keeps in sessionStorage (readable by this origin only) for the dashboard to send
// with every request. Then the dashboard opens.
const say = (text) => {
  document.getElementById("message").textContent = text;
};
const code = new URLSearchParams(location.hash.slice(1)).get("code");
// Take the code out of the address bar and the history at once.
history.replaceState(null, "", "/login");
if (!code) {
  say("No login code: run `zeroclaw dashboard` for a link.");
} else {
  fetch("/auth/exchange", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
    credentials: "same-origin",
  })
    .then((response) => {
      const proof = response.headers.get("zeroclaw-proof");
      if (response.status === 204 && proof) {
        sessionStorage.setItem("zeroclaw.proof", proof);
        location.replace("/");
      } else if (response.status === 429) say("Too many failed logins from here: wait a minute, then run `zeroclaw dashboard` again.");
      else say("This link was already used or has expired: run `zeroclaw dashboard` again.");
    })
    .catch(() => say("The daemon could not be reached."));
}
