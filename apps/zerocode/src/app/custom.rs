//! What the session's project holds (docs/project.md): `/context` shows it, and the custom
//! commands run: `/NAME ARGS` naming none of zerocode's own commands sends custom command
//! NAME's prompt, its arguments filled in by the daemon (`commands/expand`). zerocode's own
//! commands win on a clash: `/help` says which custom commands they hide.

use super::{App, Step};
use crate::complete::{Custom, built_in};
use crate::term::dim;

impl App {
    /// `/NAME ARGS` for a name zerocode does not know: the custom command's prompt sent.
    pub(super) async fn custom(&mut self, slashed: &str, arguments: &str) -> Step {
        let name = slashed.trim_start_matches('/');
        let commands = match self.client.commands_list(&self.session.id).await {
            Ok(commands) => commands,
            Err(e) => return self.failed("cannot list the custom commands", &e),
        };
        if !commands.iter().any(|c| c.name == name) {
            self.line(&format!(
                "unknown command {slashed}; /help lists the commands"
            ));
            return Ok(());
        }
        let prompt = match self
            .client
            .commands_expand(&self.session.id, name, arguments)
            .await
        {
            Ok(prompt) => prompt,
            Err(e) => return self.failed("cannot expand the command", &e),
        };
        self.line(&dim(&format!("/{name}: sending the command's prompt")));
        self.prompt(&prompt).await
    }

    /// Brings Tab completion's custom commands up to date (before each prompt is read, so a
    /// command file added meanwhile completes). A failure leaves the last list: completion
    /// is a convenience, and `/NAME` still asks the daemon.
    pub(super) async fn refresh_completion(&mut self) {
        let Ok(commands) = self.client.commands_list(&self.session.id).await else {
            return;
        };
        self.input.set_custom(
            commands
                .into_iter()
                .map(|c| Custom {
                    name: c.name,
                    argument_hint: c.argument_hint,
                    description: c.description,
                })
                .collect(),
        );
    }

    /// `/help`'s part for the session's custom commands.
    pub(super) async fn help_custom(&mut self) -> Step {
        let commands = match self.client.commands_list(&self.session.id).await {
            Ok(commands) => commands,
            Err(e) => return self.failed("cannot list the custom commands", &e),
        };
        if commands.is_empty() {
            return Ok(());
        }
        self.line("This project's custom commands (docs/project.md):");
        for c in commands {
            let usage = match &c.argument_hint {
                Some(hint) => format!("/{} {hint}", c.name),
                None => format!("/{}", c.name),
            };
            let about = c.description.unwrap_or_default();
            if built_in(&c.name) {
                self.line(&format!(
                    "  {usage:<17} {about} (hidden: zerocode's own /{} wins; rename {})",
                    c.name, c.path
                ));
            } else {
                self.line(&format!("  {usage:<17} {about}"));
            }
        }
        Ok(())
    }

    /// `/context`: what the session's turns load (`session/context`).
    pub(super) async fn show_context(&mut self) -> Step {
        let context = match self.client.session_context(&self.session.id).await {
            Ok(context) => context,
            Err(e) => return self.failed("cannot read the session's context", &e),
        };
        self.line(&format!("  project   {}", context.project_root));
        if context.instructions.is_empty() {
            self.line(&dim("  no AGENTS.md or CLAUDE.md is loaded"));
        }
        for file in &context.instructions {
            let cut = if file.truncated { ", cut" } else { "" };
            self.line(&format!(
                "  file      {} ({} bytes{cut})",
                file.path, file.bytes
            ));
        }
        for skill in &context.skills {
            self.line(&format!(
                "  skill     {}: {}",
                skill.name, skill.description
            ));
        }
        for command in &context.commands {
            let about = command.description.as_deref().unwrap_or("");
            self.line(&format!("  command   /{} {about}", command.name));
        }
        for warning in &context.warnings {
            self.line(&crate::term::red(&format!("  warning   {warning}")));
        }
        Ok(())
    }
}
