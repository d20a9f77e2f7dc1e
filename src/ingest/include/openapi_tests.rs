use super::*;

fn spec() -> Value {
    serde_json::json!({
        "openapi": "3.0.1",
        "paths": {
            "/users/{id}": {
                "parameters": [{"name": "id", "in": "path", "required": true,
                    "schema": {"type": "string"}, "description": "The user's id."}],
                "patch": {
                    "summary": "Update a user",
                    "description": "Changes the fields\ngiven.",
                    "parameters": [{"$ref": "#/components/parameters/Limit"}],
                    "requestBody": {"content": {"application/json": {"schema": {
                        "$ref": "#/components/schemas/User"}}}},
                    "responses": {
                        "200": {"description": "The user.", "content": {"application/json": {
                            "schema": {"type": "array", "items": {"$ref": "#/components/schemas/User"}}}}},
                        "404": {"description": "No such user."}
                    }
                }
            }
        },
        "webhooks": {"orderUpdated": {"post": {"summary": "An order changed",
            "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                "properties": {"order": {"type": "string", "enum": ["a", "b"]}}}}}}}}},
        "components": {
            "parameters": {"Limit": {"name": "limit", "in": "query",
                "schema": {"type": "integer", "default": 10}}},
            "schemas": {"User": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "description": "Shown\n  name."},
                "friends": {"type": "array", "items": {"$ref": "#/components/schemas/User"}},
                "created": {"type": "string", "format": "date-time"}
            }}}
        }
    })
}

#[test]
fn an_endpoint_value_names_its_file_method_and_path_or_a_webhook() {
    let ep = |m: &str, p: &str| Operation::Endpoint {
        method: m.into(),
        path: p.into(),
    };
    assert_eq!(
        parse("/openapi.json GET /users"),
        Some((Some("/openapi.json"), ep("get", "/users")))
    );
    assert_eq!(parse("post /users"), Some((None, ep("post", "/users"))));
    assert_eq!(
        parse("openapi.json webhook orderUpdated"),
        Some((
            Some("openapi.json"),
            Operation::Webhook("orderUpdated".into())
        ))
    );
    assert_eq!(parse("openapi-file-path method path"), None);
    assert_eq!(parse(""), None);
}

#[test]
fn an_operation_shows_its_parameters_body_fields_and_responses() {
    let op = Operation::Endpoint {
        method: "patch".into(),
        path: "/users/{id}".into(),
    };
    let page = render(&spec(), &op).unwrap();
    let want = "## PATCH /users/{id}\n\nUpdate a user\n\nChanges the fields\ngiven.\n\n\
### Parameters\n\n\
- `id` (path, string, required): The user's id.\n\
- `limit` (query, integer, default `10`)\n\n\
### Request body (application/json)\n\n\
- `name` (string, required): Shown name.\n\
- `friends` (array of User)\n\
- `created` (string (date-time))\n\n";
    assert!(page.starts_with(want), "{page}");
    assert!(
        page.contains("### Responses\n\n- `200`: The user.\n  - `name` (string, required)"),
        "{page}"
    );
    assert!(page.contains("- `404`: No such user.\n"), "{page}");
    assert_eq!(
        page.matches("`friends`").count(),
        2,
        "a schema inside itself is not opened: {page}"
    );
}

#[test]
fn a_webhook_and_a_missing_operation() {
    let page = render(&spec(), &Operation::Webhook("orderUpdated".into())).unwrap();
    assert!(
        page.starts_with("## Webhook orderUpdated\n\nAn order changed\n"),
        "{page}"
    );
    assert!(
        page.contains("- `order` (string, one of `a`, `b`)"),
        "{page}"
    );
    let op = Operation::Endpoint {
        method: "get".into(),
        path: "/nope".into(),
    };
    assert_eq!(render(&spec(), &op), None);
}
