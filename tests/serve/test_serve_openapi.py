"""Issue 16 S8: no API description unless asked (`docs=True` / `groundrl serve --docs`);
then /openapi.json describes the bodies the routes really read, their status codes, and
/metrics as text — behind the token like every route but /health."""

from fastapi.testclient import TestClient

from groundrl.serve.app import create_app


def test_docs_off_by_default():
    c = TestClient(create_app("eqa_rm"))
    assert c.get("/openapi.json").status_code == 404 and c.get("/docs").status_code == 404


def test_openapi_describes_bodies_and_statuses():
    c = TestClient(create_app("eqa_rm", token="t", docs=True))
    assert c.get("/openapi.json").status_code == 401
    doc = c.get("/openapi.json", headers={"Authorization": "Bearer t"}).json()
    score = doc["paths"]["/score"]["post"]
    body = score["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["samples"] and body["additionalProperties"] is False
    assert set(score["responses"]) == {"200", "400", "401", "413", "422", "503"}
    reward = doc["paths"]["/get_reward"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert reward["required"] == ["query"] and set(reward["properties"]) == {"query", "prompts", "labels"}
    assert list(doc["paths"]["/metrics"]["get"]["responses"]["200"]["content"]) == ["text/plain"]
    assert c.get("/docs", headers={"Authorization": "Bearer t"}).status_code == 200
