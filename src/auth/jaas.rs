//! The `sasl.jaas.config` property in Kafka's format (one JAAS login module):
//!
//! ```text
//! org.apache.kafka.common.security.plain.PlainLoginModule required
//!     username="admin" password="admin-secret" user_alice="alice-secret";
//! ```
//!
//! Only what the broker reads is kept: the login module's class and its options. Values may be
//! quoted (with `\"` and `\\` inside) or bare words. Error messages never repeat a value, since
//! values are passwords.

use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum JaasError {
    #[error("sasl.jaas.config: {0}")]
    Syntax(&'static str),
    #[error("sasl.jaas.config must hold exactly one login module, found {0}")]
    ModuleCount(usize),
}

/// One login module entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JaasModule {
    pub class: String,
    pub options: BTreeMap<String, String>,
}

impl JaasModule {
    pub fn option(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }
}

const FLAGS: [&str; 4] = ["required", "requisite", "sufficient", "optional"];

/// Parses a `sasl.jaas.config` value holding one login module.
pub fn parse(text: &str) -> Result<JaasModule, JaasError> {
    let tokens = tokenize(text)?;
    let mut modules = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while tokens.peek().is_some() {
        let Some(Token::Word(class)) = tokens.next() else {
            return Err(JaasError::Syntax("expected a login module class name"));
        };
        match tokens.next() {
            Some(Token::Word(flag)) if FLAGS.contains(&flag.to_ascii_lowercase().as_str()) => {}
            _ => {
                return Err(JaasError::Syntax(
                    "expected a control flag (required, requisite, sufficient, optional)",
                ));
            }
        }
        let mut options = BTreeMap::new();
        loop {
            match tokens.next() {
                Some(Token::Semicolon) => break,
                Some(Token::Word(key)) => {
                    if tokens.next() != Some(Token::Equals) {
                        return Err(JaasError::Syntax("expected '=' after an option name"));
                    }
                    let value = match tokens.next() {
                        Some(Token::Word(value)) | Some(Token::Quoted(value)) => value,
                        _ => return Err(JaasError::Syntax("expected an option value")),
                    };
                    options.insert(key, value);
                }
                _ => return Err(JaasError::Syntax("expected an option or ';'")),
            }
        }
        modules.push(JaasModule { class, options });
    }
    match modules.len() {
        1 => Ok(modules.remove(0)),
        n => Err(JaasError::ModuleCount(n)),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Quoted(String),
    Equals,
    Semicolon,
}

fn tokenize(text: &str) -> Result<Vec<Token>, JaasError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '=' => {
                chars.next();
                tokens.push(Token::Equals);
            }
            ';' => {
                chars.next();
                tokens.push(Token::Semicolon);
            }
            '"' | '\'' => {
                let quote = c;
                chars.next();
                let mut value = String::new();
                loop {
                    match chars.next() {
                        Some('\\') => match chars.next() {
                            Some(escaped) => value.push(escaped),
                            None => return Err(JaasError::Syntax("unterminated quoted value")),
                        },
                        Some(c) if c == quote => break,
                        Some(c) => value.push(c),
                        None => return Err(JaasError::Syntax("unterminated quoted value")),
                    }
                }
                tokens.push(Token::Quoted(value));
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '=' | ';' | '"' | '\'') {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                tokens.push(Token::Word(word));
            }
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafkas_plain_login_module_with_users() {
        let module = parse(
            r#"org.apache.kafka.common.security.plain.PlainLoginModule required
               username="admin" password="admin-secret"
               user_admin="admin-secret" user_alice='al"ice' user_bob="b\"ob";"#,
        )
        .unwrap();
        assert_eq!(
            module.class,
            "org.apache.kafka.common.security.plain.PlainLoginModule"
        );
        assert_eq!(module.option("username"), Some("admin"));
        assert_eq!(module.option("user_alice"), Some("al\"ice"));
        assert_eq!(module.option("user_bob"), Some("b\"ob"));
        let bare =
            parse("Module optional unsecuredLoginStringClaim_sub=thePrincipalName;").unwrap();
        assert_eq!(
            bare.option("unsecuredLoginStringClaim_sub"),
            Some("thePrincipalName")
        );
    }

    #[test]
    fn malformed_configs_are_refused_without_echoing_values() {
        for text in [
            "Module required username=\"x\"",
            "Module username=\"x\";",
            "Module required username;",
            "Module required password=\"secret",
            "",
            "A required; B required;",
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(!error.contains("secret"), "{error}");
        }
    }
}
